//! Browser and Node bindings of the iac-agui core.
