"""One grading: a submission checked, sandboxed, against the reference, test by test.

The parent's side of one run of `minigrad-grade`: the upload checked (`upload_check`), the
child started and fed programs (`child_loop`), the reference answered (`reference_cache`), each
answer judged as it arrives (`arrivals`, `judge`, `comparison`) inside the suites' pytest plugin
(`plugin`), and the grade written (`grade`)."""
