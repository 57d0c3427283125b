"""A small corpus this project writes itself: notes on Rust's memory model, in our own words.

End-to-end tests and benches need a folder of documents for the local search to read. The Rust
book in ../shared/data is not part of the repository, so a clone on its own would have nothing
to search; these notes (original text, fifteen short Markdown files) stand in wherever a test's
point is the research machinery rather than the book. They cover the questions the tests and
benches ask: ownership, borrowing, lifetimes, threads and shared state, smart pointers, errors,
traits, closures and Cargo, plus what the borrow checker cannot do, for follow-ups about limitations.

One subject per file, as a book has chapters: a research never reads a page twice (later steps see
only its snippet), so each step of a plan needs pages of its own, and a step that finds too little
asks for another one, which would change what the tests see.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

NOTES: dict[str, str] = {
    "ownership.md": """\
# Ownership: who frees a value

Every value in a Rust program has exactly one owner, a variable or a field that is responsible for
it. When the owner goes out of scope the compiler inserts the call that releases the value, so
memory is returned without a garbage collector and without the programmer writing a free call.

## Stack and heap

Values whose size is known when the program is compiled, such as integers, live on the stack and
disappear when their function returns. Values that grow at run time, such as strings read from a
file, keep a small handle on the stack (a pointer, a length and a capacity) and their contents on
the heap. Ownership matters most for the heap: someone has to give that memory back exactly once,
and too early is as wrong as never. Languages with manual memory management leave that duty to the
programmer, languages with a garbage collector to a runtime; Rust gives it to the owner.

## Scope and drop

A variable's scope runs from its declaration to the closing brace of the block that holds it.
At that brace the compiler calls `drop` on every value the block still owns, in the reverse
order of declaration. A type can implement the `Drop` trait to run its own clean-up there, which
is how files are closed, locks released and network connections shut without an explicit call.
This pattern, resource acquisition in a constructor and release in a destructor, means a value
cannot be used after it was released and cannot be released twice.
""",
    "moves-and-clones.md": """\
# Moving and cloning values

Ownership can be handed on. Which operations move a value, which copy it, and how to get two
owners when that is really wanted decide how data flows through a Rust program.

## Moves

Assigning a heap-backed value such as a `String` or a `Vec` to another variable moves ownership.
The old variable can no longer be used: the compiler rejects any later read of it. Because only
one variable owns the buffer, it is released once, which rules out double frees at compile time.

## Ownership and functions

Passing a value to a function moves it into the function's parameter, exactly like an assignment.
After the call the caller cannot use the value unless the function hands it back as its return
value. Types that are cheap to duplicate, such as integers and booleans, implement `Copy`, and
for them passing to a function copies the bits instead of moving ownership.

## Returning ownership

A function that creates a value and returns it hands ownership to the caller; nothing is copied
except the small handle on the stack. This is why building a large string inside a helper and
returning it is cheap. Returning a tuple to give back an argument as well as a result works, but
it is clumsy, and it is the usual motivation for references: most functions want to use a value
for a moment, not to own it.

## Partial moves and ownership in structs

A struct owns its fields, so dropping the struct drops each field in turn. Moving one field out of
a struct, a partial move, leaves the rest usable but the struct as a whole unusable, because part
of it now belongs elsewhere. Pattern matching can move values out of an enum or bind them by
reference with `ref`, and the compiler tracks which parts were moved on every path through the
code. Collections follow the same rule: a vector owns its elements, and pushing a value into it
moves the value into the vector's buffer.

## Clone

When two independent owners are really needed, `clone` makes a deep copy. The copy has its own
buffer and its own owner, so each is freed separately. Cloning is explicit so that expensive
copies are visible in the source.
""",
    "references-and-borrowing.md": """\
# References and borrowing

A reference lets code use a value without taking ownership of it; creating one is called
borrowing. The owner keeps the value and the borrower must give the reference up before the
owner is dropped.

## The two kinds of reference

A shared reference, written `&T`, allows reading. Any number of shared references may exist at
the same time. A mutable reference, written `&mut T`, allows changing the value, and while it
exists no other reference to that value, shared or mutable, may be used.

## Why the rules prevent data races

A data race needs two accesses to the same memory at the same time, at least one of them a write,
with no synchronisation. The borrowing rules make that impossible to express in safe code: either
there is one writer, or there are readers and no writer. The borrow checker verifies this before
the program runs, so the race is a compile error instead of a bug found in production.

## Borrowing in practice

Functions that only need to look at a value take a shared reference, which leaves ownership with
the caller and lets it keep using the value afterwards. Functions that change a value in place take
a mutable reference. Methods follow the same pattern through `&self` and `&mut self`. A common
error message, "cannot borrow as mutable because it is also borrowed as immutable", means a
shared reference is still in use at the point where a mutable one is requested; moving the last
use of the shared reference earlier, or narrowing its scope, usually resolves it.
""",
    "slices-and-dangling-references.md": """\
# Slices, aliasing and dangling references

The borrowing rules catch several classic memory errors at compile time: views into buffers
that changed, collections changed while they are iterated, and pointers to freed memory.

## Slices

A slice is a reference to a contiguous part of a collection, such as `&s[0..5]` for the first five
bytes of a string or `&v[2..]` for the tail of a vector. It borrows the collection like any other
reference, so while a slice is alive the collection cannot be cleared or grown. This catches a
classic bug at compile time: keeping an index or a view into a buffer that was changed since.

## Mutable aliasing and iterator invalidation

In many languages, changing a collection while iterating over it is a bug found at run time, if at
all. In Rust the loop holds a shared borrow of the vector for as long as it iterates, so a `push`
inside the loop body, which needs a mutable borrow, does not compile. The same rule stops a function
from receiving two mutable references to one value, which is what lets the compiler optimise on the
assumption that a `&mut` reference is the only way to reach its data.

## Dangling references

The compiler also refuses a reference that would outlive the value it points to. Returning a
reference to a local variable, for example, is rejected because the local is freed when the
function returns, and the reference would point at released memory.
""",
    "lifetimes.md": """\
# Lifetimes and the borrow checker

A lifetime is the region of the program during which a reference is valid. Most lifetimes are
inferred; the programmer names them only when a function takes several references and returns
one, so the compiler knows which input the output borrows from.

## How the borrow checker decides a reference is still valid

The borrow checker compares the lifetime of each reference with the scope of the value it
borrows. A reference is valid as long as it is used only while the borrowed value is alive and no
conflicting borrow is active. Since non-lexical lifetimes, a borrow ends at its last use rather
than at the end of the block, so code that stops using a reference can borrow the value again.

## Lifetime annotations

An annotation such as `'a` does not change how long anything lives. It states a relation between
the inputs and the output of a function, which the checker then enforces at every call site.
Structs that hold references need annotations too, so a struct never outlives the data it borrows.
""",
    "lifetime-elision.md": """\
# Lifetime elision and 'static

Most functions that take and return references carry no lifetime annotations at all. The
compiler fills them in by rule, and one lifetime has a name of its own.

## Three rules of elision

Writing lifetimes on every function would be tedious, so the compiler applies three elision rules.
Each reference parameter gets its own lifetime. If there is exactly one input lifetime, it is given
to every output reference. If a method takes `&self` or `&mut self`, the lifetime of `self` is given
to the outputs. Only when these rules leave an output lifetime undecided must the programmer write
it out, and the error message says so.

## The static lifetime

The special lifetime `'static` means the reference may live for the whole run of the program.
String literals have it, because their text is stored in the binary itself. A bound such as
`T: 'static` on a thread's closure does not mean the data lives forever; it means the data contains
no borrowed references that could expire, so the thread may keep it as long as it needs.
""",
    "threads.md": """\
# Threads, move closures and channels

Rust's ownership rules extend to concurrency. A closure passed to `thread::spawn` must own the
data it uses, usually by writing `move`, so a thread never reads a variable that the spawning
function has already freed.

## Scoped threads

Scoped threads, created with `thread::scope`, may borrow data from the function that starts them,
because the scope waits for every thread to finish before it returns. The borrow checker can then
see that the borrowed data outlives all the threads, and plain references are enough: no `Arc` and
no `move` are needed for data that is only read.

## Channels

Message passing is the other model: a channel moves values from one thread to another, and moving
a value into the channel transfers its ownership, so the sender can no longer use it.
""",
    "send-and-sync.md": """\
# The Send and Sync traits

Whether a value may cross from one thread to another is part of its type, checked by the
compiler like any other trait bound. Together with ownership and the borrowing rules, Send and Sync
are how Rust prevents data races between threads: a value either moves to one thread or is shared
only in ways that Sync declares safe.

## Send and Sync

Two marker traits describe what may cross a thread boundary. A type is `Send` when ownership of
it can move to another thread, and `Sync` when shared references to it can be used from several
threads at once. The compiler checks these traits automatically, so sending an `Rc` to another
thread, whose counter is not atomic, is a compile error.

## What Send and Sync promise

A type that is Send promises that moving it to another thread leaves no shared, unsynchronised
state behind. A type that is Sync promises that sharing references to it across threads is safe,
which is the same as saying that a reference to it is Send. Almost every type is both, because the
compiler derives them from the fields: a struct is Send and Sync when all of its fields are. Raw
pointers and `Rc` are the notable exceptions, and a type that contains one loses the promise too.
Implementing Send or Sync by hand requires `unsafe`, since the compiler can no longer check it.
""",
    "mutex-and-arc.md": """\
# Shared state: Mutex and Arc

Sometimes several threads must change the same data. Rust allows it only through types that
make every access synchronised. A Mutex behind an Arc carries Rust's borrowing rules over to run
time: the lock hands out one mutable borrow of the data at a time, which prevents data races while
ownership of the Mutex itself is shared by the Arc.

## Mutex and Arc

To share mutable state between threads, wrap it in a `Mutex` and share the mutex through an
`Arc`, an atomically reference-counted pointer. Locking returns a guard that gives access to the
data and releases the lock when it goes out of scope. Because the data can only be reached
through the guard, no thread can touch it without holding the lock, which prevents data races.

## Why Mutex needs Arc

A Mutex on its own has one owner, so it cannot be moved into several threads at once. Wrapping it
in an Arc gives every thread its own handle to the same Mutex: cloning the Arc only increments an
atomic counter, and the Mutex is freed when the last handle is dropped. The plain `Rc` cannot play
this role because its counter is updated without atomic instructions, which is why the compiler
refuses to let an `Rc` cross into another thread. The pair Arc and Mutex is the thread-safe counterpart of the single-threaded
pair Rc and RefCell.

## Poisoning and deadlocks

If a thread panics while it holds a lock, the mutex is marked as poisoned, and the next `lock` call
returns an error that tells the caller the data may be half-updated. The type system cannot prevent
a deadlock, though: two threads that take two locks in opposite orders can still wait for each
other forever, so lock ordering remains the programmer's job.

## Atomics

For a single counter or flag, the atomic types such as `AtomicUsize` and `AtomicBool` allow
lock-free updates from many threads. A shared reference to one can be handed to every thread, and
each operation states its memory ordering. Atomics are the building block that
`Arc` and `Mutex` themselves are made of.
""",
    "smart-pointers.md": """\
# Smart pointers: Box, Rc and RefCell

Smart pointers are structs that own data and add behaviour when they are dereferenced or dropped.

## Box

`Box<T>` puts a value on the heap and owns it. It suits recursive types, whose size would
otherwise be unknown, and large values that should move without being copied.

## Rc

`Rc<T>` counts references so that several owners can share one value in a single thread. The
value is dropped when the last `Rc` is. It gives shared, read-only access.

## RefCell and interior mutability

`RefCell<T>` moves the borrowing rules from compile time to run time: it allows mutation through a
shared reference and panics if the program breaks the rules, for example by borrowing mutably
twice. Combined as `Rc<RefCell<T>>`, it gives several owners that can all change the value.

## Reference cycles

Reference counting cannot free a cycle of `Rc` values that point at each other: each keeps the
other's count above zero, and the memory leaks. `Weak` references, which do not count as owners,
break such cycles.
""",
    "borrow-checker-limits.md": """\
# Limitations of ownership and the borrow checker

The ownership model has costs. Some correct programs are rejected because the checker cannot
prove them safe, and the programmer has to restructure the code, clone data or reach for
reference counting.

## Graphs and self-referential data

Data structures where nodes point at each other, such as doubly linked lists and graphs, do not
fit one owner per value. They are usually written with indices into a vector, with `Rc` and
`Weak`, or with unsafe code wrapped in a safe interface.

## Learning curve and compile errors

Newcomers often meet errors about moved values and conflicting borrows. The messages are precise,
but the rules take time to learn, and fighting the borrow checker is a common early experience.

## Cloning to satisfy the checker

A frequent workaround is to call `clone` so that two parts of the program each own their data. It
compiles and is often fine, but it costs memory and time, and it can hide a design where one part
should simply borrow from the other. Reviewers in Rust projects often look for clones added only to
silence a borrow error.

## Compile times and generic code

The checks happen at compile time, and together with monomorphised generics they make builds slower
than in many languages. Incremental compilation and splitting a project into crates help, but a
large program still takes noticeably longer to build than to run its tests.

## What the rules do not catch

Ownership prevents data races, not every concurrency bug: deadlocks and logic races are still
possible. Memory leaks are also considered safe, as reference cycles show, and `unsafe` blocks
turn the checks off for the code inside them.
""",
    "error-handling.md": """\
# Recoverable and unrecoverable errors

Rust separates errors a program can recover from and errors it cannot.

## panic for unrecoverable errors

`panic!` stops the current thread, unwinding the stack and dropping each owned value on the way.
It is meant for bugs, such as an index out of bounds, where continuing would be wrong.

## Result for recoverable errors

Functions that can fail return `Result<T, E>`, either `Ok` with a value or `Err` with an error.
The caller must handle both cases before it can use the value, so a forgotten error check does not
compile. The `?` operator returns the error to the caller early and keeps the happy path short.
""",
    "traits-and-generics.md": """\
# Traits and generics

A trait names a set of methods a type can implement, much like an interface. Generic functions
take type parameters constrained by traits, called trait bounds, so one function works for every
type that implements the required behaviour.

## Monomorphisation

The compiler generates a specialised copy of a generic function for each concrete type it is used
with. Generic code therefore runs as fast as hand-written code for each type, at the price of
larger binaries.

## Trait objects

When the concrete type is only known at run time, a trait object such as `Box<dyn Trait>` calls
methods through a table of function pointers, trading a little speed for flexibility.
""",
    "closures.md": """\
# Closures and their environment

A closure is an anonymous function that can use variables from the scope where it is defined.

## How closures capture variables

A closure captures each variable in the least demanding way its body allows: by shared reference
when it only reads, by mutable reference when it changes the variable, and by value when it
consumes it. Writing `move` before the closure forces capture by value, which is needed when the
closure outlives the scope, for example when it runs on another thread.

## Fn, FnMut and FnOnce

The way a closure captures decides which traits it implements: `Fn` for closures that only read,
`FnMut` for those that mutate their captures, and `FnOnce` for those that consume them and can
therefore be called only once.
""",
    "cargo.md": """\
# Cargo: building and dependencies

Cargo is Rust's build tool and package manager. A `Cargo.toml` file lists a package's name,
version and dependencies; Cargo downloads the dependencies from a registry, resolves compatible
versions and records the exact choice in `Cargo.lock` so every build uses the same code.

## Workspaces

A workspace groups several packages that share one `Cargo.lock` and one output directory, so
related crates are built together and agree on the versions of their dependencies.
""",
}


def write_rust_notes(folder: Path) -> Path:
    """Write the notes into `folder` and return it resolved: the corpus names documents by their
    real path, and tests compare source URLs with it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder.resolve()


@pytest.fixture(scope="session")
def rust_notes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The notes in a folder of their own, written once per test session."""
    yield write_rust_notes(tmp_path_factory.mktemp("rust-notes"))
