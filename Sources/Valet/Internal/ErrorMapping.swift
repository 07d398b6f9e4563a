import KeychainCore

extension KeychainError {
    /// The one place the store's errors become Valet's: a missing item is `itemNotFound`; every
    /// other failure (locked, damaged, unavailable, too large...) is `couldNotAccessKeychain`,
    /// as Apple's statuses fold into it.
    init(_ error: StoreError) {
        switch error {
        case .itemNotFound: self = .itemNotFound
        default: self = .couldNotAccessKeychain
        }
    }
}
