"""The loading plumbing the readers share: CSV, JSON and SQLite reading, row batches, shards."""
