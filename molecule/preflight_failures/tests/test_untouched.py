"""A refused node is left exactly as preparation left it."""

MARKER = "/var/tmp/sim-prepared"


def test_nothing_changed_after_refusal(host):
    # Without the marker `find -newer` fails and prints nothing: that must not pass.
    assert host.file(MARKER).exists, f"{MARKER} is missing: the prepare step did not run"
    changed = host.run(
        f"find /etc /usr /opt /home /var/lib /root -xdev -newer {MARKER} "
        "-not -path '/root/.ansible*' -print"
    )
    assert changed.rc == 0, changed.stderr
    assert changed.stdout.strip() == ""


def test_no_ascend_software_installed(host):
    assert not host.file("/usr/local/Ascend/cann").exists
    assert not host.file("/usr/local/Ascend/nnal").exists
