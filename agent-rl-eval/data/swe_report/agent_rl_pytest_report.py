"""pytest plugin of the agent-rl grader: writes each test's outcome, one `STATUS nodeid` line
as `pytest -rA` words it, to the report file named by AGENT_RL_TEST_REPORT, and a last
`#finished <exit status>` line. Loaded with `-p agent_rl_pytest_report` before any conftest."""

import os

_PATH = os.environ.pop("AGENT_RL_TEST_REPORT", None)
_OUT = open(_PATH, "w", encoding="utf-8") if _PATH else None


def _write(line):
    if _OUT is not None:
        _OUT.write(line.replace("\n", " ") + "\n")
        _OUT.flush()


def pytest_runtest_logreport(report):
    xfail = hasattr(report, "wasxfail")
    if report.failed:
        _write(("FAILED " if report.when == "call" else "ERROR ") + report.nodeid)
    elif report.skipped and xfail:
        # Skipped tests are left out as `-rA` leaves them (its SKIPPED lines name no test).
        _write("XFAIL " + report.nodeid)
    elif report.passed and report.when == "call":
        _write(("XPASS " if xfail else "PASSED ") + report.nodeid)


def pytest_collectreport(report):
    if report.failed:
        _write("ERROR " + report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    _write("#finished %d" % int(exitstatus))
    if _OUT is not None:
        _OUT.close()
