# `make check`: the public checks with the per-part table. Shared by this repository's Makefile
# and the student repository's (`make classroom` copies this file), so both print the same.
# The including Makefile sets PY, CHECKS (the checks' folder), SUBMISSION and PART, and has a
# rule for $(VENV)/.student that installs what the checks need.
#   make check PART=value      one part, by name or number (PART=1)
#   make check VERBOSE=1       every failure, not only the first few

# No plugin autoload: the checks need none, and an instructor's .venv has several that
# would triple the start-up time.
check: $(VENV)/.student
	@PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 $(PY) -m pytest $(CHECKS) --submission "$(SUBMISSION)" \
		$(if $(PART),--part "$(PART)") $(if $(VERBOSE),--all-failures) \
		-q --tb=no -rN --no-header -p no:cacheprovider
