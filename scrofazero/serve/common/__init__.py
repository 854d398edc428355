"""What both games' servers share: settings, the records' base and the database claim, the message
envelope and its checks, seats and connections, the transport, the guards and limits, and the
web application's common parts. Nothing here imports a game's folder (gongzhu/, fish/)."""
