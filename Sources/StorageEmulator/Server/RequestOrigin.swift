/// Facts about the connection a request came in on that the request itself does not carry.
/// The HTTP layer binds them for the time it answers one request (a task-local value, so the
/// core's signatures stay those of a request and its service).
enum RequestOrigin {
    /// The peer's IP address (what a SAS's `sip` is checked against); nil when the request
    /// did not come through a socket (tests calling the core directly).
    @TaskLocal static var clientAddress: String?
}
