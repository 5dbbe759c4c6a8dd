"""Plumbing every layer stands on: errors, JSON safe to send, logging, settings, the secrets."""
