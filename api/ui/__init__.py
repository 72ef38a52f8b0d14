"""The review page's files, served at /ui."""
