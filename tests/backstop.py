"""How long a test waits before it calls something hung: a backstop, never a measure.

The suite asserts nothing on wall-clock or CPU time (tests/test_no_timed_asserts.py
keeps it so): speed is measured by bench/, as ratios. A test that waits for a
process, a page or a server still needs a bound, or a real hang would hold the
suite for ever; that bound is HANG, far above what any wait takes on a loaded
machine. At a load of 18 on two cores a process gets a ninth of a core, so the
slowest wait in the suite (a wheel build and a bare install, a few minutes on an
idle core) could take half an hour; a wait past that is a hang.
"""

HANG = 3600  # seconds
HANG_MS = HANG * 1000  # the same, for APIs counted in milliseconds (playwright)
