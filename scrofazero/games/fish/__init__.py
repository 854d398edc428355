"""Fish (Literature): 6 or 8 players in two teams ask each other for cards and call sets
(docs/rules.md section 17). The rules (with each seat's view and the move types), the public events
and the transcripts of recorded games live here; nothing in this package knows about belief,
players or torch."""
