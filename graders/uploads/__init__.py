"""Reading what students handed in, trusting none of it: one upload's files (`intake`), archives,
the layouts and LMS downloads classes collect them in, ids, rosters and hand-in times. Used by
the class command and by the similarity report alike."""
