/// Valet 5 declares this class public with only internal helpers; it exists for source
/// compatibility. On Linux the Secure Enclave valets' logic lives in KeychainCore's presence
/// authentication (see ``SecureEnclaveValet``).
public final class SecureEnclave: Sendable {}
