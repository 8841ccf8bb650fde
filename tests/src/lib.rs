//! Shared helpers of the cross-crate test suites.
