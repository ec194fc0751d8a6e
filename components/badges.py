"""Small visual markers: verdict colours, score badges against thresholds, agent avatars."""

from __future__ import annotations

LABEL_COLOURS = {
    "SUPPORTS": "green",
    "SUPPORTED": "green",
    "TRUE": "green",
    "REFUTES": "red",
    "REFUTED": "red",
    "NOT SUPPORTED": "red",
    "FALSE": "red",
    "HALF-TRUE": "orange",
    "NOT ENOUGH INFO": "gray",
    "INCONCLUSIVE": "gray",
}
AGENT_AVATARS = {
    "Analyst": "🔎",
    "Human checker": "🧑‍💼",
    "RAG": "📚",
    "Search": "🌐",
    "Judge": "⚖️",
    "Politician": "🎤",
    "Scientist": "🔬",
    "Debater A": "🅰️",
    "Debater B": "🅱️",
    "Summarizer": "📝",
    "Researcher": "🕵️",
    "Advocate for": "🟢",
    "Advocate against": "🔴",
}


def label_badge(label: str | None) -> str:
    """Markdown for a label as a coloured badge; labels are our own constants, safe to render."""
    if not label:
        return ":gray-badge[no label]"
    colour = LABEL_COLOURS.get(label, "blue")
    return f":{colour}-badge[{label}]"


def score_badge(name: str, value: float, threshold: float | None = None) -> str:
    """A metric as a badge: green when it meets its threshold, red when not, blue without one."""
    if threshold is None:
        return f":blue-badge[{name} {value:.2f}]"
    ok = value >= threshold
    return f":{'green' if ok else 'red'}-badge[{name} {value:.2f} {'≥' if ok else '<'} {threshold:.2f}]"


def avatar_for(agent: str) -> str:
    return AGENT_AVATARS.get(agent, "🗣️")
