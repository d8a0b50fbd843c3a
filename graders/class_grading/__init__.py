"""Grade a whole class: collect submissions, grade them in parallel, write the class's records."""
