WARNING:|BUG:|Oops|general protection|kernel BUG|UBSAN|KASAN|kmemleak|INFO: task .* blocked|refcount_t:|list_(add|del) corruption|scheduling while atomic
