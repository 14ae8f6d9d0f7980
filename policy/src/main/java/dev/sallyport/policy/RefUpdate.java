package dev.sallyport.policy;

import java.util.Objects;

/**
 * One ref-update command of a push ({@code old-id new-id refname}, object ids in hex): a create when the old id is
 * all zeros, a delete when the new one is, an update otherwise. Whether an update is a fast-forward or a force
 * push cannot be told from the command: that needs the repository's history.
 */
public record RefUpdate(String oldId, String newId, String ref) {

    /** What an update does to its ref. */
    public enum Change {
        CREATE, UPDATE, DELETE;

        /** The lower-case word for the audit record and messages. */
        public String word() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public RefUpdate {
        Objects.requireNonNull(oldId, "oldId");
        Objects.requireNonNull(newId, "newId");
        Objects.requireNonNull(ref, "ref");
    }

    public Change change() {
        return zero(oldId) ? Change.CREATE : zero(newId) ? Change.DELETE : Change.UPDATE;
    }

    private static boolean zero(String id) {
        return id.chars().allMatch(c -> c == '0');
    }
}
