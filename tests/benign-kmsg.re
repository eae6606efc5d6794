kmemleak: Kernel memory leak detector initialized
kmemleak: Automatic memory scanning thread (started|ended)
