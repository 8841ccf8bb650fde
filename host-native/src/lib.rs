//! The native host of iac-agui: sockets, files and A2A I/O around the sans-IO core.
