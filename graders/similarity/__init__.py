"""minigrad-similar: which students share code, with the release's own code left out."""
