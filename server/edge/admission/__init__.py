"""Admission control: who the client is, and what each client may open or create."""
