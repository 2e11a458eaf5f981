/// An error already phrased for the person who caused it: what failed, where, and what to do,
/// in one line (its `description`). Libraries state the facts; a program prints it as it is.
/// `azseed` prints it on stderr and exits 1.
public protocol PersonFacingError: Error, CustomStringConvertible {}
