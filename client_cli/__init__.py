"""solrace's terminal client."""
