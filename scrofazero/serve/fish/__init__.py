"""The Fish tables of the server: their messages, records, tables, hub and routes (/fish,
/api/fish/*, /ws/fish)."""
