"""Fish (Literature): 6 or 8 players in two teams ask each other for cards and call sets
(shared/docs/fish.md). Rules, transcripts of recorded games and belief tracking live here;
nothing in this package knows about agents or torch."""
