"""Text: untrusted text made safe for where it lands, probabilities as people read them, stopwords."""
