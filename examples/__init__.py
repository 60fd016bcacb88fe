"""Example agents; each module defines ``agent`` (and usually ``card``)."""
