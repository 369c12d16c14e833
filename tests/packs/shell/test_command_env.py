"""The command environment never carries credentials or code-injection hooks, whatever ``env_allow``
says. Real subprocesses through the real dispatcher. (Programs that read configuration from their
working directory are no longer refused: the sandbox confines what they run, see
``test_sandbox_attacks.py``.)"""

from __future__ import annotations

import shutil

import pytest
from pydantic import ValidationError
from reyn_tools_shell.settings import ShellSettings

SCRUBBED = {
    # credentials in values (names that look harmless)
    "DATABASE_URL": "postgres://app:hunter2@db.internal:5432/app",
    "REDIS_URL": "redis://:hunter2@cache:6379/0",
    "MONGODB_URI": "mongodb+srv://app:hunter2@cluster0.example.net/db",
    "AMQP_BROKER": "amqp://guest:hunter2@rabbit//",
    "HTTPS_PROXY": "http://proxyuser:hunter2@proxy:3128",
    "http_proxy": "http://proxyuser:hunter2@proxy:3128",
    "REPO_REMOTE": "https://ghp_hunter2@github.com/org/repo.git",
    "ODBC_CONN": "Server=db;Database=app;Uid=app;Password=hunter2;",
    "LIBPQ_CONN": "host=db user=app password=hunter2",
    # credentials in names
    "MYSQL_PWD": "hunter2",
    "SENTRY_DSN": "https://hunter2@o0.ingest.sentry.io/0",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/hunter2",
    "DB_PASS": "hunter2",
    "AZURE_CONNECTION_STRING": "hunter2",
    # code injection
    "LD_PRELOAD": "/tmp/x.so",
    "LD_LIBRARY_PATH": "/tmp",
    "DYLD_INSERT_LIBRARIES": "/tmp/x.dylib",
    "PYTHONSTARTUP": "/tmp/x.py",
    "PYTHONPATH": "/tmp",
    "PYTHONHOME": "/tmp",
    "NODE_OPTIONS": "--require /tmp/x.js",
    "NODE_PATH": "/tmp",
    "npm_config_script_shell": "/tmp/x.sh",
    "PERL5OPT": "-Mx",
    "PERL5LIB": "/tmp",
    "RUBYOPT": "-rx",
    "BASH_ENV": "/tmp/x.sh",
    "ENV": "/tmp/x.sh",
    "PROMPT_COMMAND": "touch x",
    "PS4": "$(touch x)",
    "SHELLOPTS": "xtrace",
    "BASH_FUNC_ls%%": "() { touch x; }",
    "GCONV_PATH": "/tmp",
    "GLIBC_TUNABLES": "glibc.x=1",
    "OPENSSL_CONF": "/tmp/x.cnf",
    "JAVA_TOOL_OPTIONS": "-javaagent:/tmp/x.jar",
    "_JAVA_OPTIONS": "-javaagent:/tmp/x.jar",
    "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='touch x'",
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "core.fsmonitor",
    "GIT_SSH_COMMAND": "touch x",
    "GIT_EXEC_PATH": "/tmp",
    "GIT_ASKPASS": "/tmp/x.sh",
    "GIT_DIR": "/tmp/x",
    "SSH_ASKPASS": "/tmp/x.sh",
    "EDITOR": "touch x",
    "VISUAL": "touch x",
    "PAGER": "touch x",
    "LESSOPEN": "|touch x",
    "XDG_CONFIG_HOME": "/tmp/x",
    "MAKEFILES": "/tmp/x.mk",
    "LUA_INIT": "os.execute('touch x')",
    "CARGO_BUILD_RUSTC_WRAPPER": "/tmp/x",
}
KEPT = {
    "REYN_PLAIN": "visible",
    "SERVICE_URL": "https://api.example.com/v1",  # a URL without user information
    "NO_PROXY": "localhost,127.0.0.1",
    "GIT_COMMITTER_NAME": "Reyn Bot",  # identities are not hooks
}


async def test_credentials_and_code_injection_variables_never_reach_a_command(make_shell, monkeypatch):
    for name, value in {**SCRUBBED, **KEPT}.items():
        monkeypatch.setenv(name, value)
    shell = make_shell(env_allow=["*"])  # even "allow everything"
    out = (await shell.run(argv=["env"]))["stdout"]
    env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    leaked = {n for n in SCRUBBED if n in env and env[n] == SCRUBBED[n]}
    assert not leaked
    assert "hunter2" not in out
    assert {n: env.get(n) for n in KEPT} == KEPT


async def test_bash_env_would_run_code_and_is_dropped(make_shell, monkeypatch, tmp_path):
    marker = tmp_path / "PWNED"
    script = tmp_path / "startup.sh"
    script.write_text(f"touch {marker}\n")
    monkeypatch.setenv("BASH_ENV", str(script))
    bash = {"name": "bash", "allow_args": ["^-c$", "^true$"]}
    shell = make_shell(programs=[bash], env_allow=["*"])
    assert (await shell.run(command="bash -c true"))["exit_code"] == 0
    assert not marker.exists()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
async def test_node_options_would_run_code_and_is_dropped(make_shell, monkeypatch, tmp_path):
    marker = tmp_path / "PWNED"
    hook = tmp_path / "hook.js"
    hook.write_text(f"require('fs').writeFileSync({str(marker)!r}, 'x')\n")
    monkeypatch.setenv("NODE_OPTIONS", f"--require {hook}")
    node = {"name": "node", "allow_args": ["^--version$"]}
    shell = make_shell(programs=[node], env_allow=["*"])
    assert (await shell.run(command="node --version"))["exit_code"] == 0
    assert not marker.exists()


async def test_home_inside_the_workspace_is_dropped(make_shell, monkeypatch, workspace):
    monkeypatch.setenv("HOME", str(workspace / "sub"))
    shell = make_shell()
    names = {line.split("=", 1)[0] for line in (await shell.run(argv=["env"]))["stdout"].splitlines()}
    assert "HOME" not in names


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"env_set": {"NODE_OPTIONS": "--require x"}}, "env_set cannot set 'NODE_OPTIONS'"),
        ({"env_set": {"GIT_CONFIG_PARAMETERS": "x"}}, "env_set cannot set 'GIT_CONFIG_PARAMETERS'"),
        ({"env_set": {"GIT_PAGER": "less"}}, "env_set cannot set 'GIT_PAGER'"),
        ({"env_set": {"BASH_ENV": "x"}}, "env_set cannot set 'BASH_ENV'"),
        ({"env_set": {"DATABASE_URL": "postgres://u:p@db/x"}}, "carries credentials"),
        ({"env_allow": ["PATH", "LD_PRELOAD"]}, "'LD_PRELOAD' is always dropped"),
        ({"env_allow": ["EDITOR"]}, "'EDITOR' is always dropped"),
        ({"write_roots": ["../elsewhere"]}, "must be a directory relative to the workspace"),
        ({"write_roots": ["/proc/self"]}, "inside a pseudo-filesystem"),
    ],
)
def test_settings_that_would_pass_hooks_or_credentials_fail_at_load(settings, message):
    with pytest.raises(ValidationError, match=message):
        ShellSettings.model_validate(settings)
