"""Demo data of our own making and a real OAI-PMH endpoint serving it (no ``../shared`` needed)."""
