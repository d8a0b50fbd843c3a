"""What a grade looks like to people: the results model, where a failure starts, the escaping
of student text for each place it lands, and how the kit's output files are written."""
