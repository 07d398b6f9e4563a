import ValetNaming

// Valet's naming types live in ValetNaming (Foundation-free, shared with the `keychain`
// command); under these names they are Valet's, as in Valet 5.

/// A non-empty string naming a Valet's sandbox.
public typealias Identifier = ValetNaming.Identifier
/// An access group shared by programs: a prefix and a group identifier.
public typealias SharedGroupIdentifier = ValetNaming.SharedGroupIdentifier
/// When a Valet's items can be read.
public typealias Accessibility = ValetNaming.Accessibility
/// The accessibility of an iCloud Valet.
public typealias CloudAccessibility = ValetNaming.CloudAccessibility
/// What a Secure Enclave Valet's reads must prove.
public typealias SecureEnclaveAccessControl = ValetNaming.SecureEnclaveAccessControl
