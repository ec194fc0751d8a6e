"""Evidence tools: embeddings, the local corpus index (Chroma), and web search (ddgs)."""
