//! What users say in a soak when no LoCoMo data is at hand.

/// Sentences of the kind users say, about five hundred, the same on every
/// run: for a soak without the LoCoMo data at hand.
pub fn everyday_texts() -> Vec<String> {
    let people = ["Maria", "Jon", "Aiko", "Sam", "Priya", "Luis", "Ana", "Tom"];
    let doings = [
        "started a pottery class on Tuesdays",
        "adopted a rescue greyhound called Pixel",
        "is planning a trip to Lisbon in the spring",
        "finished reading a novel about lighthouse keepers",
        "signed up for a half marathon in October",
        "moved into a flat near the river",
        "is learning to play the cello",
        "volunteers at the animal shelter on weekends",
        "cooked a lentil curry for the neighbours",
        "lost the keys to the bike shed again",
        "got a new job at a bakery downtown",
        "wants to repaint the kitchen a pale green",
    ];
    let asides = [
        "and it went better than expected.",
        "but the weather might spoil it.",
        "so the next few weeks are busy.",
        "which everyone found funny.",
        "after thinking about it for months.",
    ];
    let mut texts = Vec::new();
    for (i, person) in people.iter().enumerate() {
        for (j, doing) in doings.iter().enumerate() {
            for (k, aside) in asides.iter().enumerate() {
                if (i + j + k) % 2 == 0 {
                    texts.push(format!("{person} {doing}, {aside}"));
                }
            }
        }
    }
    texts
}
