package dev.sallyport.sandbox.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RelayBudgetTest {

    @Test
    void halfTheTaskLimitWithinItsBounds() {
        assertThat(RelayBudget.forTasks(64, l -> { }).limit()).isEqualTo(32);
        assertThat(RelayBudget.forTasks(4096, l -> { }).limit()).isEqualTo(RelayBudget.MOST);
        assertThat(RelayBudget.forTasks(1_000_000, l -> { }).limit()).isEqualTo(RelayBudget.MOST);
        assertThat(RelayBudget.forTasks(0, l -> { }).limit()).as("no task limit known").isEqualTo(RelayBudget.MOST);
        assertThat(RelayBudget.forTasks(4, l -> { }).limit()).isEqualTo(RelayBudget.FEWEST);
        assertThatThrownBy(() -> RelayBudget.of(0, l -> { })).hasMessageContaining("expected: at least 1");
    }

    @Test
    void aConnectionOverTheBudgetIsRefusedAndTheFirstRefusalReportedOnce() {
        List<Integer> reports = new ArrayList<>();
        RelayBudget budget = RelayBudget.of(2, reports::add);
        assertThat(budget.take()).isTrue();
        assertThat(budget.take()).isTrue();
        assertThat(budget.take()).isFalse();
        assertThat(budget.take()).isFalse();
        assertThat(budget.inFlight()).isEqualTo(2);
        assertThat(reports).containsExactly(2);
        budget.give();
        assertThat(budget.take()).as("a share given back is taken again").isTrue();
        assertThat(budget.take()).isFalse();
        assertThat(reports).as("reported once a run").containsExactly(2);
    }
}
