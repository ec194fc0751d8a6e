"""Who may do what on a shared desk: users, their desk roles, sign-in."""
