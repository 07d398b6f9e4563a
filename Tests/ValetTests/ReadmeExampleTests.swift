import Foundation
import Testing
import Valet

@Suite("The README's Valet example")
struct ReadmeExampleTests {
    @Test("the Druidia / Skroob example stores and reads back the luggage combination")
    func druidiaSkroob() throws {
        let fixture = try Fixture()
        ValetStore.withStore(fixture.store) {
            // The lines of Valet's README, as written there (the read needs `try?`, as it does
            // with Valet 5 on Apple platforms: `string(forKey:)` throws).
            let myValet = Valet.valet(with: Identifier(nonEmpty: "Druidia")!, accessibility: .whenUnlocked)
            let username = "Skroob"
            try? myValet.setString("12345", forKey: username)
            let myLuggageCombination = try? myValet.string(forKey: username)

            #expect(myLuggageCombination == "12345")
        }
    }
}
