"""What every part of the desk stands on: errors, the domain (claims, evidence, verdicts), personas, the machine, the config, the events, safe text and the database."""
