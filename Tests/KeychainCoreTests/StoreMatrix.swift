import KeychainTestSupport
import Testing

@Suite("Item semantics on the vault")
struct VaultItemSemantics {
    @Test(arguments: StoreBehaviour.allCases)
    func behaviour(_ behaviour: StoreBehaviour) throws {
        try behaviour.run(TestStore(.vault))
    }
}

@Suite(
    "Item semantics on the Secret Service",
    .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
struct SecretServiceItemSemantics {
    @Test(arguments: StoreBehaviour.allCases)
    func behaviour(_ behaviour: StoreBehaviour) throws {
        try behaviour.run(TestStore(.secretService))
    }
}
