package dev.sallyport.sandbox.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A tiny assembler for classic BPF as seccomp reads it: {@code struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}},
 * native (little-endian) byte order. Conditional jumps name labels; {@link #assemble()} resolves them to the
 * relative forward offsets the kernel expects and refuses backward or too-long jumps.
 */
final class Bpf {
    static final int LD_W_ABS = 0x20;   // BPF_LD | BPF_W | BPF_ABS
    static final int JEQ_K = 0x15;      // BPF_JMP | BPF_JEQ | BPF_K
    static final int JSET_K = 0x45;     // BPF_JMP | BPF_JSET | BPF_K
    static final int RET_K = 0x06;      // BPF_RET | BPF_K
    static final int AND_K = 0x54;      // BPF_ALU | BPF_AND | BPF_K
    static final int INSTRUCTION_BYTES = 8;

    private record Insn(int code, String jt, String jf, int k) {}

    private final List<Insn> program = new ArrayList<>();
    private final Map<String, Integer> labels = new HashMap<>();

    /** Loads the 32-bit word at {@code offset} of {@code struct seccomp_data} into the accumulator. */
    Bpf load(int offset) {
        program.add(new Insn(LD_W_ABS, null, null, offset));
        return this;
    }

    /** If the accumulator equals {@code k} go to {@code ifTrue}, else to {@code ifFalse} (null = next). */
    Bpf jumpIfEqual(int k, String ifTrue, String ifFalse) {
        program.add(new Insn(JEQ_K, ifTrue, ifFalse, k));
        return this;
    }

    /** If {@code accumulator & k != 0} go to {@code ifTrue}, else to {@code ifFalse} (null = next). */
    Bpf jumpIfAnySet(int k, String ifTrue, String ifFalse) {
        program.add(new Insn(JSET_K, ifTrue, ifFalse, k));
        return this;
    }

    /** {@code accumulator &= k}. */
    Bpf and(int k) {
        program.add(new Insn(AND_K, null, null, k));
        return this;
    }

    Bpf ret(int value) {
        program.add(new Insn(RET_K, null, null, value));
        return this;
    }

    /** Names the next instruction. */
    Bpf label(String name) {
        if (labels.putIfAbsent(name, program.size()) != null) {
            throw new IllegalStateException("bpf label " + name + ": defined twice (expected: unique labels)");
        }
        return this;
    }

    byte[] assemble() {
        ByteBuffer out = ByteBuffer.allocate(program.size() * INSTRUCTION_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int pc = 0; pc < program.size(); pc++) {
            Insn insn = program.get(pc);
            out.putShort((short) insn.code());
            out.put((byte) offset(pc, insn.jt()));
            out.put((byte) offset(pc, insn.jf()));
            out.putInt(insn.k());
        }
        return out.array();
    }

    private int offset(int pc, String label) {
        if (label == null) {
            return 0;
        }
        Integer target = labels.get(label);
        if (target == null) {
            throw new IllegalStateException("bpf label " + label + ": not defined (expected: a label() call)");
        }
        int offset = target - pc - 1;
        if (offset < 0 || offset > 255) {
            throw new IllegalStateException("bpf jump to " + label + ": offset " + offset + " (expected: 0..255, forward)");
        }
        return offset;
    }
}
