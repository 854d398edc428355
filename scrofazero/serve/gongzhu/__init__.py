"""The Gongzhu tables of the server: their messages, protocol, records, tables, hub, reviews of a
seat's moves, and routes (the page, /api/*, /ws)."""
