"""A newsroom's shared workflow over the run store: the claims queue, comments, editorial review and publishing."""
