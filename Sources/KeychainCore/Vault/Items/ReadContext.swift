/// One read in progress, passed down to every row it opens: the presence private key a proof
/// gave (values behind an access control open only with it), and the access control of the
/// first such value it met without one, which the caller asks a proof for.
struct ReadContext {
    /// The unwrapped presence private key, when the caller holds a proof.
    let presenceKey: SecretBytes?
    /// The access control of a value that needed a proof this read did not have.
    var presenceNeeded: AccessControl?

    init(presenceKey: SecretBytes? = nil) {
        self.presenceKey = presenceKey
    }
}
