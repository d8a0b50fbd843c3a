"""minigrad-class: grade a whole class of submissions with the hidden grader (DESIGN §7)."""
