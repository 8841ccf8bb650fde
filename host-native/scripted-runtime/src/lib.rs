//! A scripted A2A runtime speaking the iac-code wire (not an agent).
