"""The model: the profile every reader fills and every analysis reads (tables, roles, names)."""
