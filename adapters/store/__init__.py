"""The conversation store on SQLite or PostgreSQL: one SQL implementation, dialects, migrations, the
database connections and the PostgreSQL advisory lock."""
