"""The GPU catalogue and ceilings: what each GPU can do, from where, and user ceilings files."""
