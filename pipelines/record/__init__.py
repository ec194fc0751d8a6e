"""What a run leaves behind: the store, the event writer, the journal, redaction, the digest, the verdict card, export, replay."""
