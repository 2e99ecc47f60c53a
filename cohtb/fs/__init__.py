"""Full-system runs: the guest kernel, its userland and its layouts."""
