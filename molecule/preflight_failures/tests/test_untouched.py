"""A refused node is left exactly as preparation left it."""


def test_nothing_changed_after_refusal(host):
    changed = host.run(
        "find /etc /usr /opt /home /var/lib /root -xdev -newer /var/tmp/sim-prepared "
        "-not -path '/root/.ansible*' -print 2>/dev/null"
    )
    assert changed.stdout.strip() == ""


def test_no_ascend_software_installed(host):
    assert not host.file("/usr/local/Ascend/cann").exists
    assert not host.file("/usr/local/Ascend/nnal").exists
